/* Mutant: no phase lease: a locker cut off from the phase key keeps locking in the phase it last read. */
#define MUT_NO_LEASE 1
#include "migrate.pml"

/* Mutant: an acquire in flight is not reported in the registry until it lands. */
#define MUT_NO_RESERVE 1
#include "migrate.pml"

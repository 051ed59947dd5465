/* Mutant: a missing phase key reads as legacy (a fresh locker runs legacy beside modern holders). */
#define MUT_LOST_AS_LEGACY 1
#include "migrate.pml"

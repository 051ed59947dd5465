/* Mutant: the silence is the phase lease alone, the longest lease left out. */
#define S (PL)
#include "namespace.pml"

/* Mutant: the controller ignores the maxmemory policy: steps, repairs and inits while evidence can be evicted. */
#define MUT_IGNORE_POLICY 1
#include "namespace.pml"

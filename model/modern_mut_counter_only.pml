/* Mutant: the fence is the counter alone (INCR): after a restart that lost the counter, two holders carry the same fence. */
#define MUT_COUNTER_ONLY 1
#include "modern.pml"

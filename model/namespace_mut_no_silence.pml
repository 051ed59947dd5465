/* Mutant: init without the silence wait: a namespace with nothing in it starts legacy at once. */
#define MUT_NO_SILENCE 1
#include "namespace.pml"

/* Mutant: a follower that read an instance accepts another. */
#define MUT_ANY_INSTANCE 1
#include "namespace.pml"

/* Mutant: registry entries do not report the phase of held locks: a lock held across phase steps is invisible to the controller. */
#define MUT_HELD_INVISIBLE 1
#include "migrate.pml"

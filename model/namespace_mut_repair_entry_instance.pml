/* Mutant: with the namespace hash gone, repair keeps the instance a live registry entry read before the mark's: an old follower paused through a re-init brings back the old instance and its phase. */
#define MUT_REPAIR_ENTRY_INSTANCE 1
#include "namespace.pml"

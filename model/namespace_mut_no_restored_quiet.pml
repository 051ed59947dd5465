/* Mutant: no quiet period after a restore for steps beyond dual-write: the sighting of a live legacy holder lost in the flush, init restores dual-read, the step to modern goes through once the silence passed, before a locker meets the legacy holder again. */
#define MUT_NO_RESTORED_QUIET 1
#include "namespace.pml"

/* Mutant (liveness): a lock that ended stays in the held set, so the entry reports its phase for ever and the controller never steps past it. */
#define MUT_STALE_HELD 1
#include "migrate.pml"

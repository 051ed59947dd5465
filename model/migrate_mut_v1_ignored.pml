/* Mutant: the controller steps past a live registry entry of the old format (an old-version locker during an upgrade). */
#define MUT_V1_IGNORED 1
#include "migrate.pml"

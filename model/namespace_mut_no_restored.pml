/* Mutant: no wait after a restore for steps and rollbacks (the silence): after a flush and init from the mark, an unforced rollback goes through at once although the entry that refused it went with the flush, beside a cut-off holder. */
#define MUT_NO_RESTORED 1
#include "namespace.pml"

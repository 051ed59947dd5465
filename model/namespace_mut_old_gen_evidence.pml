/* Mutant: without the hash, entries below the mark's generation count as evidence (the newest generation among the entries alone): a follower cut off through a rollback re-registers after the flush with its old phase, and the repair to that evidence undoes the rollback beside a legacy holder. */
#define MUT_OLD_GEN_EVIDENCE 1
#include "namespace.pml"

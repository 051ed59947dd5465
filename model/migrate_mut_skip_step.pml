/* Mutant: the controller skips the one-step rule (steps two phases at once). */
#define MUT_SKIP_STEP 1
#include "migrate.pml"

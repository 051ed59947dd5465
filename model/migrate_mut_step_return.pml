/* Mutant: a follower whose phase lease lapsed, holding nothing, steps one phase towards the phase it reads instead of starting afresh at it. */
#define MUT_STEP_RETURN 1
#include "migrate.pml"

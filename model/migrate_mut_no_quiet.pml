/* Mutant: the controller ignores legacy sightings and the quiet period: a live legacy (Java) locker beside dual-read. */
#define MUT_NO_QUIET 1
#include "migrate.pml"

/* Mutant: the follower runs the phase it read before its registry entry shows it (it moves at the reading, and reports it in a later heartbeat). */
#define MUT_MOVE_FIRST 1
#include "migrate.pml"

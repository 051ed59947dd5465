/* Mutant: a heartbeat only touches the stored entry when its phase and held locks are unchanged, ignoring next: the announce of a move is never written, and the follower runs the new phase while its entry still shows the old one alone. */
#define MUT_TOUCH_IGNORES_NEXT 1
#include "migrate.pml"

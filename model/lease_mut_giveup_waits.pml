/* Mutant: the give-up check waits for the callback: the auto-refresh waits for the turn a hung Refresh by hand holds, and the lease checks its give-up point only between callbacks: Done stays open after the server let another client in. */
#define MUT_GIVEUP_WAITS 1
#include "lease.pml"

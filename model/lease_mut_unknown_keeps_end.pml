/* Mutant: an unknown shortening leaves the old end: a Refresh to a shorter ttl shortens the local lease only when its reply comes; lost, the old, longer end stays while the server's lease is the shorter one. */
#define MUT_UNKNOWN_KEEPS_END 1
#include "lease.pml"

/* Mutant: the lease is counted from the reply, not from the send: a late reply makes the client believe past the key's expiry. */
#define MUT_LEASE_FROM_REPLY 1
#include "modern.pml"

/* Mutant: a reading whose heartbeat wrote nothing (an entry under the follower's id with a seq at or above its own stands) still renews the phase lease: the follower locks while the registry no longer counts it. */
#define MUT_ZERO_RENEWS 1
#include "migrate.pml"

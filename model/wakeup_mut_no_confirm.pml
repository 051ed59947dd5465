/* Mutant: Subscribe returns once SUBSCRIBE is sent, not once the server confirmed it: the waiter's attempt after subscribing runs before the server counts it, a release in between publishes nothing, and the waiter sleeps for ever. */
#define MUT_NO_CONFIRM 1
#include "wakeup.pml"

/* Mutant: the subscribers counted in a round trip of their own before the release script (PUBSUB NUMSUB, then the script with "publish or not"): a waiter that subscribes, is confirmed and misses in between is not woken. Inside the script the order of DEL and the count does not matter: scripts run one at a time. */
#define MUT_COUNT_OUTSIDE 1
#include "wakeup.pml"

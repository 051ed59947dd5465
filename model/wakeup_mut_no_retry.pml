/* Mutant: no attempt at once after the subscription is confirmed: a release between the miss and the subscription published nothing (nobody was counted), and the waiter sleeps for ever. */
#define MUT_NO_RETRY 1
#include "wakeup.pml"

/* Mutant: the hub keeps a channel whose last waiter left confirmed until its UNSUBSCRIBE's reply: a waiter joining meanwhile does not subscribe, the UNSUBSCRIBE lands, releases count nobody, and it sleeps for ever. */
#define MUT_UNSUB_CONFIRMED 1
#include "wakeup.pml"

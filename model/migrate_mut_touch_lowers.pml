/* Mutant: the touch before the fix: not judged by its seq, and it sets the stored expiry to its own hold. A touch held up in the network (the short hold of a follower that took no lock yet) lands after the entry of a lock call's reading (the longer hold) and cuts the entry's life short while the lock runs. */
#define MUT_TOUCH_LOWERS 1
#include "migrate.pml"

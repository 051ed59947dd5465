/* Mutant: the mark taken after the attempt instead of before it: a release between the miss and the mark is not counted as heard, the mark covers the gap all the same, and the waiter neither attempts again nor is woken: it sleeps for ever. */
#define MUT_MARK_AFTER 1
#include "wakeup.pml"

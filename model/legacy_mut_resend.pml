/* Mutant: a release whose reply was lost is sent again by a lower layer
 * (go-redis MaxRetries), with the same arguments. Must fail: the resend
 * deletes a successor's value that lies inside the owner window. */
#define MUT_RESEND 1
#include "legacy.pml"

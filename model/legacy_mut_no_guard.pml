/* Mutant: the caller's clock only, no server-side second guard (no TIME >
 * W + m refusal). Must fail: a release decided in time that runs after a
 * pause deletes a successor's value. */
#define MUT_NO_GUARD 1
#include "legacy.pml"

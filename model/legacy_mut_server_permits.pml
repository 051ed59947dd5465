/* Mutant: the owner window judged by the server's clock alone, as before
 * the fix: release and refresh act while the server's TIME < W, whatever the
 * caller's own clock says. Must fail: a holder paused past its lease (by its
 * own clock) still releases when the server's clock is behind. */
#define MUT_SERVER_PERMITS 1
#include "legacy.pml"

/* Mutant: a confirmed grant ignores the unsure write's ttl: a shorter Refresh whose reply was lost runs on the server after a longer auto-refresh was confirmed, and sets the server's lease below the local one. */
#define MUT_IGNORES_UNSURE 1
#include "lease.pml"

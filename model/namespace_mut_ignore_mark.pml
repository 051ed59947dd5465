/* Mutant: init ignores the mark (restores nothing; the silence rule alone). */
#define MUT_IGNORE_MARK 1
#include "namespace.pml"

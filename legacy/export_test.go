package legacy

// The scripts of ModeAtomic, for the tests of their arguments.
var (
	AcquireScript = acquireScript
	ReleaseScript = releaseScript
	RefreshScript = refreshScript
)

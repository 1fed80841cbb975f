//go:build !race

package openai

// raceIOSync is a no-op outside race-detector builds (see rxstamp_race_linux.go).
func raceIOSync(uintptr) {}

// raceWriteSync is a no-op outside race-detector builds (see rxstamp_race_linux.go).
func raceWriteSync(uintptr) {}

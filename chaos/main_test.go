package chaos

import (
	"os"
	"testing"
)

// clientEnv makes the test binary act as a chaos client process, as
// `lockbench chaos __client` does.
const clientEnv = "LOCKBENCH_CHAOS_TEST_CLIENT"

func TestMain(m *testing.M) {
	if os.Getenv(clientEnv) == "1" {
		os.Exit(ClientMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// testOptions start client processes from this test binary.
func testOptions(t *testing.T) Options {
	return Options{ClientCommand: []string{os.Args[0]}, ClientEnv: []string{clientEnv + "=1"}, Log: t.Output(), TempDir: t.TempDir()}
}

package localmasters

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"lockbench/internal/redisserver"
)

// InstallRedisServer installs the Debian package when this process may
// (root, apt-get present, LOCKBENCH_NO_INSTALL unset), and says why not
// otherwise.
func InstallRedisServer(w io.Writer) error {
	if os.Getenv("LOCKBENCH_NO_INSTALL") == "1" {
		return errors.New("LOCKBENCH_NO_INSTALL=1, so it is not installed")
	}
	if os.Geteuid() != 0 {
		return errors.New("not root, so it is not installed")
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		return errors.New("no apt-get here to install it")
	}
	fmt.Fprintln(w, "lockbench: redis-server not found; installing it (apt-get install redis-server)")
	for _, args := range [][]string{{"update", "-qq"}, {"install", "-y", "-qq", "redis-server"}} {
		var out bytes.Buffer
		cmd := exec.Command(apt, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s failed: %v: %s", strings.Join(args, " "), err, lastLine(out.String()))
		}
	}
	if _, ok := redisserver.Path(); !ok {
		return errors.New("apt-get installed redis-server, but it is not in PATH")
	}
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

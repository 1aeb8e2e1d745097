package zklock

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The members' log lines date each expiry; the first one logged counts,
// and other lines are skipped.
func TestSessionEnds(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		"2026-12-02T05:01:02.345+00:00 [SessionTracker] INFO org.apache.zookeeper.server.ZooKeeperServer - Expiring session 0x1000a2b, timeout of 2000ms exceeded",
		"2026-12-02T05:01:03.000+00:00 [main] WARN org.apache.zookeeper.server.ZooKeeperServer - something else",
	}
	later := "2026-12-02T05:01:09.000+00:00 [SessionTracker] INFO org.apache.zookeeper.server.ZooKeeperServer - Expiring session 0x1000a2b, timeout of 2000ms exceeded"
	c := &Cluster{}
	for i, body := range []string{lines[0] + "\n" + lines[1] + "\n", later + "\n"} {
		p := filepath.Join(dir, string(rune('a'+i)))
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		c.members = append(c.members, &Member{logPath: p})
	}
	ends := c.SessionEnds()
	want := time.Date(2026, 12, 2, 5, 1, 2, 345e6, time.UTC)
	if len(ends) != 1 || !ends["1000a2b"].Equal(want) || SessionName(0x1000a2b) != "1000a2b" {
		t.Fatalf("%v", ends)
	}
}

package zklock

import (
	"bufio"
	"os"
	"regexp"
	"time"
)

// logStamp is the members' log time stamp (Java's SimpleDateFormat), whole
// and zoned so that a line dates itself; goStamp is the same for Go.
const (
	logStamp = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
	goStamp  = "2006-01-02T15:04:05.000Z07:00"
)

// SessionEndSource says how a session's end on the servers is seen, for the
// lock-loss lag.
const SessionEndSource = `zookeeper: the leader's log line "Expiring session 0x…" (ms stamps); the client learnt by its StateExpired event, on reconnecting`

// expiring is the session tracker's line for a session it expires.
var expiring = regexp.MustCompile(`^(\S+) .* Expiring session 0x([0-9a-f]+),`)

// SessionEnds are the sessions the members' logs say were expired, by id
// (hex), with the first time one logged it.
func (c *Cluster) SessionEnds() map[string]time.Time {
	out := map[string]time.Time{}
	for _, m := range c.members {
		m.sessionEnds(out)
	}
	return out
}

func (m *Member) sessionEnds(out map[string]time.Time) {
	f, err := os.Open(m.logPath)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		g := expiring.FindStringSubmatch(sc.Text())
		if g == nil {
			continue
		}
		t, err := time.Parse(goStamp, g[1])
		if prev, seen := out[g[2]]; err == nil && (!seen || t.Before(prev)) {
			out[g[2]] = t
		}
	}
}

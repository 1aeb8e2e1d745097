package engine

import (
	"testing"
	"time"
)

func TestParseCommandStats(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_set:calls=12,usec=30,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_evalsha:calls=7,usec=41,usec_per_call=5.86,rejected_calls=0,failed_calls=1\r\n" +
		"cmdstat_config|set:calls=2,usec=9,usec_per_call=4.50\r\nused_cpu_sys:1.0\r\n"
	got := ParseCommandStats(info)
	if got["set"] != (CommandStat{12, 30}) || got["evalsha"] != (CommandStat{7, 41}) || got["config|set"] != (CommandStat{2, 9}) || len(got) != 3 {
		t.Errorf("parsed %+v", got)
	}
}

func TestParseInfo(t *testing.T) {
	info := ParseInfo("# Server\r\nredis_version:7.0.15\r\nprocess_id:42\r\n\r\n# CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.25\r\n")
	if info["redis_version"] != "7.0.15" || info["process_id"] != "42" || len(info) != 4 {
		t.Errorf("parsed %v", info)
	}
	if got := info.CPU(); got != 3750*time.Millisecond {
		t.Errorf("CPU %v, want 3.75s", got)
	}
	if got := ParseInfo("").CPU(); got != -1 {
		t.Errorf("CPU of no INFO %v, want -1", got)
	}
}

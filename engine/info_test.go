package engine

import "testing"

func TestParseCommandStats(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_set:calls=12,usec=30,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_evalsha:calls=7,usec=41,usec_per_call=5.86,rejected_calls=0,failed_calls=1\r\n" +
		"cmdstat_config|set:calls=2,usec=9,usec_per_call=4.50\r\nused_cpu_sys:1.0\r\n"
	got := ParseCommandStats(info)
	if got["set"] != (CommandStat{12, 30}) || got["evalsha"] != (CommandStat{7, 41}) || got["config|set"] != (CommandStat{2, 9}) || len(got) != 3 {
		t.Errorf("parsed %+v", got)
	}
}

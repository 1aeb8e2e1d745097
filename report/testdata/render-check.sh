#!/bin/sh
# render-check.sh: open a lockbench report in headless Chromium, save a
# screenshot to look at, and fail if any image on the page did not load.
#
# usage: report/testdata/render-check.sh [DIR [OUT.png]]
#        report/testdata/render-check.sh --history [FILE.html [OUT.png]]
#   DIR      a directory holding report.html (from `lockbench report`);
#            without it, TestBuild's synthetic sweep is written to a temp dir
#            (needs go) and reported on
#   --history  check porcupine's page of a history that is not linearizable
#            (cells/ID.linearizability.html): it must draw the operations and
#            mark the point where no order explains them; without FILE, the
#            hand-built history of check's TestVisualizeFailingKey
#   OUT.png  where the screenshot goes (default: DIR/render-check.png)
#
# Needs Chromium: apt-get install -y chromium. Without it the script fails:
# a check that did not run must not look like one that passed.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
browser=
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
	echo "render-check: no chromium found; install it (apt-get install -y chromium)" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Flags keep Chromium off the network and out of the user's profile.
run() {
	"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d -p "$tmp")" "$@" 2>>"$tmp/chromium.log"
}

# history FILE OUT: the page's script draws one box per operation and a
# red mark where the linearization fails; count both in the rendered DOM.
history() {
	file=$1 out=$2
	run --screenshot="$out" --window-size=1400,900 --virtual-time-budget=5000 "file://$file" >/dev/null
	[ -s "$out" ] || { echo "render-check: no screenshot of $file; see chromium's log:" >&2; cat "$tmp/chromium.log" >&2; exit 1; }
	run --dump-dom --virtual-time-budget=5000 "file://$file" >"$tmp/history.html"
	ops=$(grep -o 'class="history-rect"' "$tmp/history.html" | wc -l)
	bad=$(grep -o 'linearization-invalid' "$tmp/history.html" | wc -l)
	if [ "$ops" -lt 2 ] || [ "$bad" -eq 0 ]; then
		echo "render-check: $file draws $ops operations and $bad failing linearization marks; want 2 or more and some" >&2
		exit 1
	fi
	echo "render-check: $file draws $ops operations, $bad failing linearization marks; screenshot: $out"
}

if [ "${1:-}" = "--history" ]; then
	shift
	if [ $# -ge 1 ]; then
		file=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
	else
		d=$(mktemp -d -p "$tmp")
		(cd "$root" && LOCKBENCH_HISTORY_EXAMPLE_DIR="$d" go test -count=1 -run '^TestVisualizeFailingKey$' ./check/)
		file=$d/history.html
	fi
	[ -f "$file" ] || { echo "render-check: $file not found" >&2; exit 1; }
	out=${2:-${file%.html}.render-check.png}
	case $out in /*) ;; *) out=$(pwd)/$out ;; esac
	history "$file" "$out"
	exit 0
fi

# --which-lock [DIR]: lockbench choose's matrix page must show every
# design's row, its picture loaded, and every cell coloured as its text
# reads (red: data lost in some run; yellow: exclusion broken, nothing
# lost; green: neither, in enough runs to settle it at the page's max
# rate; pale: neither, in too few; orange: an outage to the end, safety
# not judged;
# grey and white: their states' words); without DIR, TestWhichLockMatrix's
# synthetic matrix, which must also show a cell of each kind of absence.
if [ "${1:-}" = "--which-lock" ]; then
	if [ $# -ge 2 ]; then
		d=$(cd "$2" && pwd)
	else
		d=$(mktemp -d -p "$tmp")
		(cd "$root" && LOCKBENCH_WHICHLOCK_EXAMPLE_DIR="$d" go test -count=1 -run '^TestWhichLockMatrix$' ./report/)
	fi
	file=$d/which-lock.html
	[ -f "$file" ] || { echo "render-check: $file not found" >&2; exit 1; }
	out=$d/which-lock.render-check.png
	run --screenshot="$out" --window-size=1400,900 "file://$file" >/dev/null
	[ -s "$out" ] || { echo "render-check: no screenshot of $file; see chromium's log:" >&2; cat "$tmp/chromium.log" >&2; exit 1; }
	cp "$file" "$d/.which-lock-check.html"
	trap 'rm -rf "$tmp" "$d/.which-lock-check.html"' EXIT
	cat >>"$d/.which-lock-check.html" <<'JS'
<script>
window.addEventListener('load', function () {
  var bad = [], cells = 0, imgs = document.images, broken = 0;
  for (var i = 0; i < imgs.length; i++) if (!imgs[i].complete || imgs[i].naturalWidth === 0) broken++;
  // 0 of n is settled clean when its one-sided 95% bound, 1 − 0.05^(1/n),
  // is at or below the page's max rate.
  var mr = /max rate \((\d+(?:\.\d+)?)%\)/.exec(document.body.textContent);
  var maxRate = mr ? +mr[1] / 100 : 0.2;
  function settled(n) { return n > 0 && 1 - Math.pow(0.05, 1 / n) <= maxRate + 1e-9; }
  var tds = document.querySelectorAll('td[class]');
  for (var j = 0; j < tds.length; j++) {
    var c = tds[j].className, t = tds[j].textContent, want;
    if (c === 'n' || c === 'meets') continue;
    cells++;
    var lost = /lost (\d+) of (\d+)/.exec(t), ov = /overlap (\d+) of (\d+)/.exec(t);
    if (t === 'not applicable' || /^not applicable: /.test(t)) want = 'na';
    else if (t === 'not supported yet') want = 'ns';
    else if (/^not exercised/.test(t)) want = 'nx';
    else if (/^not (judged|measured)/.test(t)) want = 'nj';
    else if (!lost && /safety not judged/.test(t)) want = 'down';
    else if (!lost) want = '?';
    else if (+lost[1] > 0) want = 'bad';
    else if (ov && +ov[1] > 0) want = 'warn';
    else if (!settled(+lost[2]) || (ov && !settled(+ov[2]))) want = 'us';
    else want = 'ok';
    if (want !== c) bad.push(c + ' vs ' + want + ': ' + t);
  }
  document.body.setAttribute('data-cells', cells);
  document.body.setAttribute('data-disagree', bad.length);
  document.body.setAttribute('data-first', bad.length ? bad[0] : '');
  document.body.setAttribute('data-images', imgs.length);
  document.body.setAttribute('data-broken', broken);
});
</script>
JS
	run --dump-dom --virtual-time-budget=5000 "file://$d/.which-lock-check.html" >"$tmp/which-lock.html"
	attr() { sed -n "s/.*data-$1=\"\([^\"]*\)\".*/\1/p" "$tmp/which-lock.html" | head -n 1; }
	rows=$(grep -o '<tr>' "$tmp/which-lock.html" | wc -l)
	cells=$(attr cells) disagree=$(attr disagree) images=$(attr images) broken=$(attr broken)
	na=$(grep -c 'class="na"' "$tmp/which-lock.html" || true)
	nj=$(grep -c 'class="nj"' "$tmp/which-lock.html" || true)
	if [ -z "$cells" ] || [ "$rows" -lt 2 ] || [ "$cells" -eq 0 ] || [ "$disagree" -ne 0 ] || [ "$images" -lt 1 ] || [ "$broken" -ne 0 ] ||
		{ [ $# -lt 2 ] && { [ "$nj" -eq 0 ] || [ "$na" -eq 0 ]; }; }; then
		echo "render-check: $file shows $rows rows, ${cells:-no} cells (${disagree:-?} coloured against their text: $(attr first)), $images images ($broken broken), $nj not judged or measured, $na not applicable" >&2
		exit 1
	fi
	echo "render-check: $file shows $rows rows, $cells cells, each coloured as its text reads, $images image(s) loaded; screenshot: $out"
	exit 0
fi

if [ $# -ge 1 ]; then
	dir=$(cd "$1" && pwd)
else
	dir=$(mktemp -d)/report
	echo "render-check: writing the synthetic report to $dir"
	(cd "$root" && LOCKBENCH_REPORT_EXAMPLE_DIR="$dir" go test -count=1 -run '^TestBuild$' ./report/)
fi
out=${2:-$dir/render-check.png}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
[ -f "$dir/report.html" ] || { echo "render-check: $dir/report.html not found" >&2; exit 1; }

run --screenshot="$out" --window-size=1400,3000 "file://$dir/report.html" >/dev/null
[ -s "$out" ] || { echo "render-check: no screenshot written; see chromium's log:" >&2; cat "$tmp/chromium.log" >&2; exit 1; }

# The report has no script of its own; a copy with a small one counts the
# images that did not decode (naturalWidth 0) once the page has loaded.
cp "$dir/report.html" "$tmp/check.html"
cat >>"$tmp/check.html" <<'JS'
<script>
window.addEventListener('load', function () {
  var imgs = document.images, broken = 0;
  for (var i = 0; i < imgs.length; i++) {
    if (!imgs[i].complete || imgs[i].naturalWidth === 0) broken++;
  }
  document.body.setAttribute('data-images', imgs.length);
  document.body.setAttribute('data-broken', broken);
  // Repeated cells show "median ±spread" in the rendered tables.
  var spread = 0, tds = document.querySelectorAll('td');
  for (var j = 0; j < tds.length; j++) {
    if (/\d ±\d/.test(tds[j].textContent)) spread++;
  }
  document.body.setAttribute('data-spread', spread);
});
</script>
JS
run --dump-dom --virtual-time-budget=5000 "file://$tmp/check.html" >"$tmp/dom.html"
images=$(sed -n 's/.*data-images="\([0-9]*\)".*/\1/p' "$tmp/dom.html" | head -n 1)
broken=$(sed -n 's/.*data-broken="\([0-9]*\)".*/\1/p' "$tmp/dom.html" | head -n 1)
if [ -z "$images" ] || [ -z "$broken" ]; then
	echo "render-check: the page did not finish loading in Chromium" >&2
	exit 1
fi
if [ "$images" -eq 0 ] || [ "$broken" -ne 0 ]; then
	echo "render-check: $broken of $images images did not render" >&2
	exit 1
fi
spread=$(sed -n 's/.*data-spread="\([0-9]*\)".*/\1/p' "$tmp/dom.html" | head -n 1)
if grep -q 'medians of their repeats' "$dir/report.html" && [ "${spread:-0}" -eq 0 ]; then
	echo "render-check: the report has repeated cells but no table shows median ± spread" >&2
	exit 1
fi
echo "render-check: $images images rendered, ${spread:-0} table cells show median ± spread; screenshot: $out"

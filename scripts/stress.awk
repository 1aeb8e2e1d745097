# scripts/stress's summary of bound: lines ("NAME measured=X limit<=Y" or
# "limit>=Y"; X and Y numbers or Go durations). One row an assertion:
# NAME (<= or >=) | measured min / median / max | limit min..max | worst
# measured/limit (the largest for <=, the smallest for >=). Durations are
# shown in ms.

# num: a number, or a Go duration in seconds; dur[] marks the latter.
function num(s, key,    v, u, n) {
  if (s ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) return s + 0
  dur[key] = 1
  v = 0
  while (match(s, /^-?[0-9.]+(ns|us|µs|ms|s|m|h)/)) {
    n = substr(s, 1, RLENGTH)
    u = n; sub(/^-?[0-9.]+/, "", u)
    n += 0
    v += n * (u == "ns" ? 1e-9 : u == "us" || u == "µs" ? 1e-6 : u == "ms" ? 1e-3 : u == "s" ? 1 : u == "m" ? 60 : 3600)
    s = substr(s, RLENGTH + 1)
  }
  return v
}
function show(v, key,    a) {
  if (dur[key]) v *= 1000
  a = v < 0 ? -v : v
  return sprintf(a >= 100 || a == int(a) ? "%.0f" : "%.3g", v) (dur[key] ? "ms" : "")
}
{
  name = $1
  m = $2; sub(/^measured=/, "", m)
  l = $3; op = substr(l, 6, 2); sub(/^limit(<=|>=)/, "", l)
  key = name " " op
  if (!(key in cnt)) order[++keys] = key
  x = num(m, key); y = num(l, key)
  vals[key, ++cnt[key]] = x
  if (!(key in lmin) || y < lmin[key]) lmin[key] = y
  if (!(key in lmax) || y > lmax[key]) lmax[key] = y
  r = (y != 0) ? x / y : (x == 0 ? 1 : 1e9)
  if (!(key in worst) || (op == "<=" ? r > worst[key] : r < worst[key])) worst[key] = r
}
END {
  for (k = 1; k <= keys; k++) {
    key = order[k]; c = cnt[key]
    for (i = 1; i <= c; i++) s[i] = vals[key, i]
    for (i = 2; i <= c; i++) { v = s[i]; for (j = i - 1; j >= 1 && s[j] > v; j--) s[j + 1] = s[j]; s[j + 1] = v }
    lim = show(lmin[key], key)
    if (lmax[key] != lmin[key]) lim = lim ".." show(lmax[key], key)
    printf "%s | %s / %s / %s | %s | %.2f\n", key, show(s[1], key), show(s[int((c + 1) / 2)], key), show(s[c], key), lim, worst[key]
  }
}

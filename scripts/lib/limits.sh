# Sourced by the load scripts (bench.sh, bench-fanout.sh, soak.sh). Sockets cost one descriptor in
# each process that holds them (ws-front and the load generator), and the limit is inherited by the
# JVMs and the services they start; so the script's shell raises it before anything starts.

# raise_open_files NEED WHO: raises the soft (and, where permitted, the hard) open files limit to
# NEED, else as far as the hard limit allows, and says which.
raise_open_files() {
  local need="$1" who="$2" hard
  hard="$(ulimit -Hn)"
  if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ]; then
    # above the hard limit only with CAP_SYS_RESOURCE (plain root outside a restricted container)
    ulimit -Hn "$need" 2>/dev/null || true
    hard="$(ulimit -Hn)"
  fi
  if [ "$hard" = unlimited ] || [ "$hard" -ge "$need" ]; then
    ulimit -n "$need"
  else
    ulimit -n "$hard"
  fi
  echo "$who: open files limit $(ulimit -n) (wanted $need, hard limit $hard);" \
    "ephemeral ports $(tr '\t' '-' </proc/sys/net/ipv4/ip_local_port_range) per source address" >&2
  if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need" ]; then
    echo "$who: the hard limit cannot be raised here (no CAP_SYS_RESOURCE); start the container with" \
      "'--ulimit nofile=$need:$need' or raise it in /etc/security/limits.conf" >&2
    return 1
  fi
  return 0
}

"""Run one agent command inside a container and make sure nothing outlives it.

Usage (by the lab's agent, after nsenter has entered the container's
namespaces):  nsguard.py CWD COMMAND
COMMAND runs as `sh -c COMMAND` in CWD (or / if CWD does not exist there).

Process layout:
    stub     the process the agent's caller knows (or, when nsenter had to
             fork into a PID namespace, a child of that nsenter).  Waits for
             the keeper and returns its exit status; forwards TERM/INT/HUP/QUIT.
    keeper   child subreaper in a session of its own: every orphaned
             descendant of the command is re-parented to it.  When the stub dies (even by SIGKILL:
             PR_SET_PDEATHSIG), when it gets a signal, and when the command
             exits, it kills every process left under it.
    command  `sh -c COMMAND`, PR_SET_PDEATHSIG=SIGKILL towards the keeper.
Exit status: the command's, 128+N if it died of signal N, 255 on setup errors.
Only the standard library: started with `python3 -I -S`, so it starts quickly.
"""
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
GRACE = 2  # seconds between the forwarded signal and SIGKILL

_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option, arg):
    if _libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        raise OSError(ctypes.get_errno(), "prctl")


def proc_matches():
    """True when /proc shows our own PID namespace (then /proc PIDs are ours)."""
    try:
        return int(os.readlink("/proc/self")) == os.getpid()
    except (OSError, ValueError):
        return False


def descendants(root):
    """PIDs under root (not root itself), parents before children."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        try:
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        except (ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), ()):
            out.append(c)
            todo.append(c)
    return out


def exit_code(status):
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return 255


def run_command(cwd, command):
    """In the command's process: default signals, die with the keeper, exec sh."""
    for s in STOP_SIGNALS + (signal.SIGALRM, signal.SIGPIPE, signal.SIGCHLD):
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    keeper = os.getppid()
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != keeper:
        os._exit(255)
    try:
        os.chdir(cwd)
    except OSError:
        os.chdir("/")
    if command.strip():
        argv = ["sh", "-c", command]
    else:  # like `ssh HOST`: a shell
        argv = ["sh", "-i"] if os.isatty(0) else ["sh"]
    try:
        os.execv("/bin/sh", argv)
    except OSError as e:
        sys.stderr.write(f"agent: cannot run /bin/sh: {e}\n")
    os._exit(255)


def keeper_main(stub, cwd, command):
    # a session of its own: signals to the agent's process group (a terminal's
    # Ctrl-C, kill(-pgid, SIGKILL)) cannot take the keeper down before it
    # cleaned up; they reach it through the stub's death or forwarding
    os.setsid()
    me = os.getpid()
    exact = proc_matches()
    state = {"stopping": False, "child": None}

    def kill_all(sig):
        if exact:
            for _ in range(20):  # again, in case something forked meanwhile
                pids = descendants(me)
                if not pids:
                    return
                for p in pids:
                    try:
                        os.kill(p, sig)
                    except OSError:
                        pass
                if sig != signal.SIGKILL:
                    return
        elif state["child"]:
            try:
                os.kill(state["child"], sig)
            except OSError:
                pass

    def on_stop(sig, _frame):
        if state["stopping"]:
            return
        state["stopping"] = True
        kill_all(sig)
        signal.alarm(GRACE)

    def on_alarm(_sig, _frame):
        kill_all(signal.SIGKILL)

    for s in STOP_SIGNALS:
        signal.signal(s, on_stop)
    signal.signal(signal.SIGALRM, on_alarm)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    if os.getppid() != stub:  # the stub is already gone
        os._exit(255)
    child = os.fork()
    if child == 0:
        run_command(cwd, command)
    state["child"] = child
    code = None
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child:
            code = exit_code(status)
            kill_all(signal.SIGKILL)  # leftovers (background jobs, daemons)
    os._exit(255 if code is None else code)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: nsguard.py CWD COMMAND\n")
        return 255
    cwd, command = sys.argv[1], sys.argv[2]
    parent = os.getppid()
    state = {"keeper": None}

    def forward(sig, _frame):
        if state["keeper"]:
            try:
                os.kill(state["keeper"], sig)
            except OSError:
                pass

    # block stop signals until the handlers are in place in both processes
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        return 255
    stub = os.getpid()
    keeper = os.fork()
    if keeper == 0:
        try:
            keeper_main(stub, cwd, command)
        finally:
            os._exit(255)
    state["keeper"] = keeper
    for s in STOP_SIGNALS:
        signal.signal(s, forward)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    while True:
        try:
            _, status = os.waitpid(keeper, 0)
            return exit_code(status)
        except ChildProcessError:
            return 255


if __name__ == "__main__":
    sys.exit(main())

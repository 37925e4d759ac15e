"""A persistent interpreter for the FAKE ``atc``, so a conversion does not pay for starting
Python and importing onnx twice (about 1 s per ``atc`` call).

The shim ``<toolkit>/bin/atc`` that ``fake_atc.install_fake_toolkit`` writes runs this file as
a small stdlib-only client (``python -S fake_atc_server.py ARGS``). The client connects to a
Unix socket; the server behind it has onnx and the fake ATC imported already and forks one child
per call. The client hands the child its argv, working directory, environment and its own stdin,
stdout and stderr (``SCM_RIGHTS``), so the child writes exactly where the real process would; the
child's exit status becomes the client's. What the caller sees is unchanged: a real process on
PATH, its output in the caller's log file, its exit status, its process group to signal. A
client killed by a timeout closes its socket, and the child exits with it.

The first client starts the server (its own session, stdio on /dev/null). The server ends when
it has been idle for ``IDLE_SECONDS``, when the process that installed the toolkit has exited,
or when its socket file is removed. If the socket cannot be used (no AF_UNIX, no server within
``START_SECONDS``) or ``FAKE_ATC_SERVER=0``, the client runs the fake ATC directly
(``python -m pytest_ascend_accuracy.testing.fake_atc``), as before.

Environment (written by the shim): ``FAKE_ATC_SOCKET`` (socket path), ``FAKE_ATC_OWNER`` (pid of
the process that installed the toolkit), ``FAKE_ATC_PYTHON`` (interpreter for server/fallback).
"""
import json
import os
import socket
import struct
import sys
import time

IDLE_SECONDS = 120.0
START_SECONDS = 30.0
SERVE_FLAG = "--fake-atc-serve"
_HEADER = struct.Struct("!Q")
_STATUS = struct.Struct("!i")


# -- client (stdlib only: it runs under ``python -S``) -------------------------------------------
def client_main(argv):
    path = os.environ.get("FAKE_ATC_SOCKET", "")
    if os.environ.get("FAKE_ATC_SERVER", "1") != "0" and path and hasattr(socket, "send_fds"):
        sock = _connect(path)
        if sock is not None:
            return _call(sock, argv)
    return _run_directly(argv)


def _connect(path):
    sock = _try_connect(path)
    if sock is not None:
        return sock
    try:
        server = _start_server(path)
    except OSError:
        return None
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        sock = _try_connect(path)
        if sock is not None:
            return sock
        if server.poll() not in (None, 0):  # it failed (0: another server won the start race)
            return None
        time.sleep(0.02)
    return None


def _try_connect(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        return sock
    except OSError:
        sock.close()
        return None


def _start_server(path):
    import subprocess

    python = os.environ.get("FAKE_ATC_PYTHON") or sys.executable
    return subprocess.Popen([python, "-m", "pytest_ascend_accuracy.testing.fake_atc_server", SERVE_FLAG, path,
                      os.environ.get("FAKE_ATC_OWNER", "0")],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, close_fds=True)


def _call(sock, argv):
    payload = json.dumps({"argv": list(argv), "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    with sock:
        try:
            socket.send_fds(sock, [_HEADER.pack(len(payload))], [0, 1, 2])
        except OSError:  # e.g. a closed stdio fd: nothing ran yet, so run directly
            return _run_directly(argv)
        sock.sendall(payload)
        status = _recv_exact(sock, _STATUS.size)
    if len(status) != _STATUS.size:
        sys.stderr.write("FAKE atc: the fake-atc server ended without an exit status\n")
        return 1
    return _STATUS.unpack(status)[0]


def _run_directly(argv):
    python = os.environ.get("FAKE_ATC_PYTHON") or sys.executable
    os.execv(python, [python, "-m", "pytest_ascend_accuracy.testing.fake_atc", *argv])


def _recv_exact(sock, size):
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


# -- server ---------------------------------------------------------------------------------------
def serve(path, owner_pid):
    """Accept calls on ``path`` and fork a child for each, until idle or orphaned."""
    import fcntl
    import signal

    from . import fake_atc

    lock = open(path + ".lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server owns this socket
    try:
        fake_atc.preload()
        if os.path.exists(path):
            os.unlink(path)  # stale: its server no longer holds the lock
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        os.chmod(path, 0o600)
    except BaseException:
        os.unlink(path + ".lock")  # clients fall back to running the fake ATC directly
        raise
    server.listen(16)
    server.settimeout(1.0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    inode = os.stat(path).st_ino
    last = time.monotonic()
    try:
        while True:
            try:
                conn, _ = server.accept()
            except socket.timeout:
                if time.monotonic() - last > IDLE_SECONDS or not _alive(owner_pid) or not _same(path, inode):
                    return 0
                continue
            last = time.monotonic()
            if os.fork() == 0:
                server.close()
                lock.close()  # the lock is the server's: a long call must not hold it
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _child(conn, fake_atc.main)
            conn.close()
    finally:
        if _same(path, inode):
            os.unlink(path)
            os.unlink(path + ".lock")
        server.close()


def _child(conn, main):
    """One fake ATC call in a forked child; never returns."""
    import threading
    import traceback

    code = 1
    try:
        head, fds, _, _ = socket.recv_fds(conn, _HEADER.size, 3)
        request = json.loads(_recv_exact(conn, _HEADER.unpack(head)[0]))
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["atc", *request["argv"]]
        threading.Thread(target=_exit_with_client, args=(conn,), daemon=True).start()
        try:
            code = main(request["argv"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        conn.sendall(_STATUS.pack(int(code)))
    finally:
        os._exit(0)


def _exit_with_client(conn):
    """The client sends nothing after its request: EOF means it was killed (a timeout)."""
    try:
        conn.recv(1)
    except OSError:
        pass
    os._exit(143)


def _alive(pid):
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _same(path, inode):
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == SERVE_FLAG:
        sys.exit(serve(sys.argv[2], int(sys.argv[3])))
    sys.exit(client_main(sys.argv[1:]))

#!/usr/bin/env python3
"""A stand-in for bumblebeed, the Bumblebee daemon, for gpukit's tests.

It listens on a unix stream socket and answers as bumblebeed 3.2 does: each
client message is NUL-terminated and dispatched on its first letter; 'C' or
'F' (optirun sends "Connect" or "Connect NoX") asks for the discrete GPU and
is answered "Yes. ..." or "No - error: ...", 'S' asks for the status, 'Q KEY'
for a setting, 'D' ends the conversation. Answers are NUL-terminated lines. A
client that got "Yes" keeps the card on until its connection closes; when the
last such client is gone the card is switched off again.

Everything that happens is appended to the log file, one event a line, so
tests can read what the daemon saw:
    listening
    connect N
    recv N <message>
    card on
    disconnect N
    card off

Usage: fake_bumblebee.py SOCKET --log FILE [--refuse | --silent | --hangup]
  --refuse   answer every request for the GPU with "No - error: ..."
  --silent   never answer (the client's timeout is tested with this)
  --hangup   close each connection as soon as a request arrives
"""
import argparse
import os
import selectors
import signal
import socket
import sys

REFUSAL = "No - error: Could not enable discrete graphics card"


class Daemon:
    def __init__(self, path, log, mode):
        self.path, self.log_path, self.mode = path, log, mode
        self.selector = selectors.DefaultSelector()
        self.clients = {}   # socket -> (number, pending bytes)
        self.users = set()  # client numbers that were told "Yes"
        self.count = 0
        self.running = True

    def log(self, line):
        with open(self.log_path, "a") as f:
            f.write(line + "\n")

    def serve(self):
        if os.path.lexists(self.path):
            os.unlink(self.path)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.path)
        server.listen(8)
        self.selector.register(server, selectors.EVENT_READ)
        self.log("listening")
        while self.running:
            for key, _ in self.selector.select(timeout=0.2):
                if key.fileobj is server:
                    self.accept(server)
                else:
                    self.receive(key.fileobj)
        server.close()
        os.unlink(self.path)

    def accept(self, server):
        client, _ = server.accept()
        self.count += 1
        self.clients[client] = (self.count, b"")
        self.selector.register(client, selectors.EVENT_READ)
        self.log(f"connect {self.count}")

    def drop(self, client):
        number, _ = self.clients.pop(client)
        self.selector.unregister(client)
        client.close()
        self.log(f"disconnect {number}")
        if number in self.users:
            self.users.discard(number)
            if not self.users:
                self.log("card off")

    def receive(self, client):
        try:
            data = client.recv(4096)
        except ConnectionError:
            data = b""
        if not data:
            self.drop(client)
            return
        number, pending = self.clients[client]
        pending += data
        *messages, pending = pending.split(b"\0")
        self.clients[client] = (number, pending)
        for raw in messages:
            message = raw.decode(errors="replace")
            self.log(f"recv {number} {message}")
            if self.mode == "hangup":
                self.drop(client)
                return
            answer = self.answer(number, message)
            if answer is not None:
                client.sendall(answer.encode() + b"\n\0")
            if message.startswith("D"):
                self.drop(client)
                return

    def answer(self, number, message):
        kind = message[:1]
        if kind in ("C", "F"):
            if self.mode == "silent":
                return None
            if self.mode == "refuse":
                return REFUSAL
            if not self.users:
                self.log("card on")
            self.users.add(number)
            return "Yes. X is active."
        if kind == "S":
            state = "on" if self.users else "off"
            return f"Ready (3.2.1). X inactive. Discrete video card is {state}."
        if kind == "Q":
            key = message.partition(" ")[2]
            values = {"VirtualDisplay": ":8", "LibraryPath": "/usr/lib/nvidia"}
            return f"Value: {values[key]}" if key in values else "Unknown key requested."
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("socket")
    parser.add_argument("--log", required=True)
    group = parser.add_mutually_exclusive_group()
    for mode in ("refuse", "silent", "hangup"):
        group.add_argument(f"--{mode}", dest="mode", action="store_const", const=mode)
    args = parser.parse_args()
    daemon = Daemon(args.socket, args.log, args.mode)

    def stop(signum, frame):
        daemon.running = False
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    daemon.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Hostile uploads against a real ``shrec-score serve``: every one is a 422
naming what was refused, and nothing of it is written anywhere (issue 32)."""

from __future__ import annotations

import csv
import io
import os
import stat
import tarfile
import zipfile

import pytest

from .test_server_kit import Served, add_team, tgz_of, tiny_run, write_contest, zip_of

pytest.importorskip("starlette", reason="the server extra is not installed")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    contest = write_contest(folder, extra="rate_limit: 1000\nmax_members: 50\nmax_unpacked_mb: 8\nmax_ratio: 100\n")
    token = add_team(contest, "eve")
    server = Served(contest).start()
    yield server, token, str(folder)
    server.kill()


def _zip(members: list[tuple[zipfile.ZipInfo | str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in members:
            z.writestr(info, data)
    return buf.getvalue()


def _tar(members: list[tarfile.TarInfo], data: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for info in members:
            body = (data or {}).get(info.name)
            t.addfile(info, io.BytesIO(body) if body is not None else None)
    return buf.getvalue()


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def _symlink_member() -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("run/1.txt")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def _device() -> tarfile.TarInfo:
    info = tarfile.TarInfo("run/1.txt")
    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
    return info


GOOD = tiny_run()

CASES = [
    ("zip slip", "run.zip", lambda tmp: _zip([("run/../../evil.txt", b"x"), *((f"run/{k}", v) for k, v in GOOD.items())]), "expected a path inside the archive, got one with '..'"),
    ("backslash slip", "run.zip", lambda tmp: _zip([("..\\evil.txt", b"x")]), "got one with '..'"),
    ("absolute path", "run.zip", lambda tmp: _zip([(os.path.join(tmp, "evil-abs.txt"), b"x")]), "expected a relative path, got an absolute one"),
    ("absolute path in tar", "run.tgz", lambda tmp: _tar([tarfile.TarInfo(os.path.join(tmp, "evil-abs.txt"))]), "expected a relative path, got an absolute one"),
    ("zip symlink", "run.zip", lambda tmp: _zip([(_symlink_member(), b"/etc/passwd")]), "expected a file or a folder, got a symbolic link"),
    ("tar symlink", "run.tgz", lambda tmp: _tar([_link("run/1.txt", "/etc/passwd", tarfile.SYMTYPE)]), "expected a file or a folder, got a symbolic link"),
    ("tar hard link", "run.tgz", lambda tmp: _tar([_link("run/1.txt", "/etc/passwd", tarfile.LNKTYPE)]), "expected a file or a folder, got a hard link"),
    ("tar device", "run.tgz", lambda tmp: _tar([_device()]), "expected a file or a folder, got a device or another special file"),
    ("bomb", "run.zip", lambda tmp: _zip([("run/1.txt", b"\0" * (64 << 20))]), "expected the archive to unpack to at most 100 times its size, got more (a compression bomb?)"),
    ("10,000 members", "run.zip", lambda tmp: _zip([(f"run/{i}.txt", b"") for i in range(10_000)]), "expected at most 50 members in the archive, got more"),
    ("damaged zip", "run.zip", lambda tmp: zip_of(GOOD)[:-40], "expected a .zip archive, got a damaged one"),
    ("damaged tgz", "run.tgz", lambda tmp: tgz_of(GOOD)[:100], "expected a .tar.gz archive, got a damaged one"),
    ("empty archive", "run.zip", lambda tmp: _zip([]), "expected one run folder in the archive, got no file"),
    ("only clutter", "run.zip", lambda tmp: _zip([("readme_run/1.txt", b"1"), ("Thumbs.db", b"x")]),
     "expected one run folder in the archive, got only entries passed over as clutter ('Thumbs.db', 'readme_run')"),
    # (a bug hunt's 500s: each OSError of writing a member became a traceback)
    ("member twice", "run.zip", lambda tmp: _zip([("run/a", b"1"), ("run/a", b"2")]), "archive member 'run/a': expected each member once, got 'run/a' twice (refused, not overwritten)"),
    ("file then folder", "run.zip", lambda tmp: _zip([("run/a", b"1"), ("run/a/b", b"2")]), "archive member 'run/a/b': expected a file and a folder never to share a name, got 'run/a' as both"),
    ("folder then file", "run.zip", lambda tmp: _zip([("run/a/b", b"2"), ("run/a", b"1")]), "archive member 'run/a': expected a file and a folder never to share a name, got 'run/a' as both"),
    ("file then folder in tar", "run.tgz", lambda tmp: tgz_of({"a": b"1", "a/b": b"2"}), "archive member 'run/a/b': expected a file and a folder never to share a name, got 'run/a' as both"),
    ("folder then file in tar", "run.tgz", lambda tmp: tgz_of({"a/b": b"2", "a": b"1"}), "archive member 'run/a': expected a file and a folder never to share a name, got 'run/a' as both"),
    ("name of 300 bytes", "run.zip", lambda tmp: _zip([("run/" + "n" * 300, b"1")]), "expected names of at most 255 bytes, got one of 300"),
    ("2,100 folders deep", "run.zip", lambda tmp: _zip([("run/" + "d/" * 2100 + "1.txt", b"1")]), "expected a path at most 32 folders deep, got 2102 parts"),
]


@pytest.mark.parametrize("what, filename, make, message", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_archive_is_refused_and_nothing_of_it_is_written(tiny, what, filename, make, message):
    server, token, folder = tiny
    before = server.stored_entries()
    r = server.upload(token, make(folder), filename)
    assert r.status_code == 422, r.text
    errors = r.json()["errors"]
    assert len(errors) == 1 and message in errors[0]["message"], errors
    assert server.stored_entries() == before
    assert os.listdir(os.path.join(server.data, "incoming")) == []
    for evil in ("evil.txt", "evil-abs.txt"):
        for where in (folder, os.path.dirname(folder), server.data, os.path.join(server.data, "runs")):
            assert not os.path.exists(os.path.join(where, evil))


def test_an_upload_named_with_300_characters_is_checked_not_a_500(tiny):
    """A plain file's stored name keeps its extensions, cut to their last short ones (a bug hunt's
    ENAMETOOLONG in the rename): 'a.bbb...' keeps none and is checked as a file with no extension."""
    server, token, _ = tiny
    name = "a." + "b" * 298
    r = server.upload(token, GOOD["1.txt"], name)
    assert r.status_code == 422, r.text
    assert [e["file"] for e in r.json()["errors"]] == [name]


def test_a_good_run_still_passes_the_same_limits(tiny):
    server, token, _ = tiny
    r = server.upload(token, tgz_of(GOOD), "mine.tgz", "fine")
    assert r.status_code == 201, r.text
    assert r.json()["run"] == "eve-fine"
    r = server.upload(token, GOOD["1.txt"], "1.txt")  # one ranked-list file is no run of this collection
    assert r.status_code == 422


def test_the_clutter_beside_an_archives_run_folder_is_passed_over(tiny):
    """README.md and Thumbs.db beside the one run folder are clutter of an unzipped submission (docs/inputs.md), as
    the scoring itself passes them over: the run is that folder, scored under the team's name.  (The archive's top
    was taken as the run, a folder holding a run, which the scoring then named 'run' after the folder inside.)"""
    server, token, _ = tiny
    files = {**{f"run/{k}": v for k, v in GOOD.items()}, "README.md": b"our run", "Thumbs.db": b"x"}
    r = server.upload(token, _zip(list(files.items())), "ours.zip", "tidy")
    assert r.status_code == 201, r.text
    assert r.json()["run"] == "eve-tidy"
    rows = server.wait(lambda rows: any(x["label"] == "eve-tidy" and x["status"] != "queued" for x in rows))
    (row,) = [x for x in rows if x["label"] == "eve-tidy"]
    (scored,) = csv.DictReader(io.StringIO(row["per_run"]))
    assert (row["status"], row["entry"], scored["run"]) == ("scored", "eve-tidy", "eve-tidy")
    assert sorted(os.listdir(os.path.join(server.data, "runs", str(row["id"]), "eve-tidy"))) == sorted(GOOD)


def test_a_fraction_of_a_megabyte_is_the_unpacked_limit_not_zero(tmp_path):
    """max_unpacked_mb: 0.5 was cut to 0 bytes (every archive refused) and 1.5 to 1 MB (a review of the ninth
    pass): the limit is 0.5 MB, so 0.4 MB unpacks and 0.6 MB is refused."""
    from shrec_score.server.archive import unpack
    from shrec_score.server.store import Failed

    limits = {"max_unpacked_mb": 0.5, "max_members": 50, "max_ratio": 1e9}
    for size, fits in ((400_000, True), (600_000, False)):
        info = tarfile.TarInfo("run/1.txt")
        info.size = size
        (tmp_path / "a.tar.gz").write_bytes(_tar([info], {"run/1.txt": b"x" * size}))
        out = tmp_path / f"out{size}"
        if fits:
            got = unpack(str(tmp_path / "a.tar.gz"), "a.tar.gz", str(out), limits)
            assert (out / got.name).stat().st_size == size  # the one file is the run
        else:
            with pytest.raises(Failed) as got:
                unpack(str(tmp_path / "a.tar.gz"), "a.tar.gz", str(out), limits)
            (error,) = got.value.body["errors"]
            assert got.value.status == 422 and error["message"] == "expected the archive to unpack to at most 0.5 MB, got more"

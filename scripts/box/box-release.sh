#!/usr/bin/env bash
# Publishes box packages into a signed apt repository (Debian's own tools: apt-ftparchive, gpg):
#   scripts/box/box-release.sh REPO_DIR DEB...
# REPO_DIR is created when absent and kept otherwise: every version published stays in its pool, so that a
# box can always fetch the release it runs (its way back). The signing key is GnuPG's, chosen by
# BOX_RELEASE_KEY (a fingerprint or user id) in BOX_RELEASE_GNUPGHOME (default: gpg's own). Prints the key's
# fingerprint on the last line: the one to give central with the release (POST /fleet/releases).
# Layout: pool/main/*.deb, dists/stable/{InRelease,Release,Release.gpg}, dists/stable/main/binary-<arch>/Packages(.gz),
# key.gpg (the public key, binary). Serve REPO_DIR from any web server or bucket, as files.
set -euo pipefail
repo=${1:?usage: box-release.sh REPO_DIR DEB...}
shift
[ $# -gt 0 ] || { echo "box-release: no package given" >&2; exit 2; }
key=${BOX_RELEASE_KEY:?set BOX_RELEASE_KEY to the signing key (fingerprint or user id)}
gpg_=(gpg --batch --yes)
[ -n "${BOX_RELEASE_GNUPGHOME:-}" ] && gpg_+=(--homedir "$BOX_RELEASE_GNUPGHOME")
command -v apt-ftparchive >/dev/null || { echo "box-release: apt-ftparchive is missing (apt install apt-utils)" >&2; exit 1; }
fpr=$("${gpg_[@]}" --with-colons --list-secret-keys "$key" | awk -F: '$1 == "fpr" { print $10; exit }')
[ -n "$fpr" ] || { echo "box-release: no secret key $key" >&2; exit 1; }
mkdir -p "$repo/pool/main" "$repo/dists/stable/main"
for deb in "$@"; do
  name=$(dpkg-deb -f "$deb" Package)
  [ "$name" = lms-classroom ] || { echo "box-release: $deb is $name, not lms-classroom" >&2; exit 2; }
  install -m 0644 "$deb" "$repo/pool/main/"
done
cd "$repo"
archs=$(for d in pool/main/*.deb; do dpkg-deb -f "$d" Architecture; done | sort -u | tr '\n' ' ')
for a in $archs; do
  mkdir -p "dists/stable/main/binary-$a"
  apt-ftparchive --arch "$a" packages pool > "dists/stable/main/binary-$a/Packages"
  gzip -9nkf "dists/stable/main/binary-$a/Packages"
done
apt-ftparchive -o APT::FTPArchive::Release::Origin=lms -o APT::FTPArchive::Release::Label=lms-classroom \
  -o APT::FTPArchive::Release::Suite=stable -o APT::FTPArchive::Release::Codename=stable \
  -o APT::FTPArchive::Release::Components=main -o "APT::FTPArchive::Release::Architectures=${archs% }" \
  release dists/stable > dists/stable/Release.tmp
mv dists/stable/Release.tmp dists/stable/Release
"${gpg_[@]}" --local-user "$fpr" --clearsign -o dists/stable/InRelease dists/stable/Release
"${gpg_[@]}" --local-user "$fpr" --armor --detach-sign -o dists/stable/Release.gpg dists/stable/Release
"${gpg_[@]}" --export "$fpr" > key.gpg
for d in pool/main/*.deb; do echo "box-release: $(basename "$d")" >&2; done
echo "$fpr"

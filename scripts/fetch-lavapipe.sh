#!/usr/bin/env bash
# Fetches Mesa 25's lavapipe (a Vulkan driver on the CPU) from Debian's
# bookworm-backports suite into a private folder of the user cache, so that
# every machine running the tests has a Vulkan WebGPU adapter with
# shader-f16 and subgroups next to llvmpipe through OpenGL ES. Debian 12's own
# Mesa 22 lavapipe is refused by Dawn.
#
# Nothing on the system changes: the packages are downloaded with apt-get
# against a private sources list and private index folders (the Debian
# mirror is taken from the system's apt configuration) and unpacked with
# dpkg -x; backend/wgpu finds the result (lvp_icd.json) and adds it to the
# Vulkan loader's driver list with VK_ADD_DRIVER_FILES, so a real GPU's
# driver stays visible and first.
#
# Usage: fetch-lavapipe.sh DEST   (DEST: e.g. ~/.cache/webtensor/lavapipe)
set -euo pipefail

# Pinned versions and SHA-256 of the .deb files. The backports suite keeps
# only its current version: when a pinned one is gone, the current one is
# taken with a warning (apt still checks it against the signed index).
MESA_VERSION=25.0.7-2~bpo12+1
LIBDRM_VERSION=2.4.123-1~bpo12+1
declare -A PINNED=(
	[mesa-vulkan-drivers]="$MESA_VERSION 3899f1800424c60a05df5d6913076a526ca8fdbabec43672cd397563d1ca3263"
	[libdrm2]="$LIBDRM_VERSION 9cc2f341964286295124a32d3625edb76730500625e54a1e682761f883064d7b"
	[libdrm-amdgpu1]="$LIBDRM_VERSION 334e2ae389af0e9cb607c2ccfbbf7ae9feb34131ff998550baeffeeae6cda296"
)

dest=${1:?usage: fetch-lavapipe.sh DEST}
stamp="$dest/installed"
if [ -f "$stamp" ] && [ -f "$dest/lvp_icd.json" ]; then
	exit 0
fi
if [ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ] || ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
	echo "deps: lavapipe is fetched on Debian/Ubuntu x86-64 only; skipping (WebGPU tests then run on the other adapters)"
	exit 0
fi

# The Debian archive the system already uses: the first URI of a deb entry
# whose suites include the system's codename (deb822 .sources or .list).
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
mirror=$(
	{
		cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v c="$codename" '
			/^[[:space:]]*$/ { if (uri != "" && suite) print uri; uri = ""; suite = 0; next }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == c) suite = 1 }
			END { if (uri != "" && suite) print uri }'
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk -v c="$codename" '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) { if ($(i+1) == c) print $i; break } }'
	} | head -n 1 || true
)
if [ -z "$mirror" ] || [ "$codename" != bookworm ]; then
	echo "deps: lavapipe: no Debian bookworm archive in the apt configuration (codename '$codename'); skipping"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb [signed-by=$keyring] $mirror bookworm-backports main" >"$work/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o "Dir::Etc::sourceparts=-"
	-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "APT::Sandbox::User=root"
	-o "Debug::NoLocking=1")
echo "deps: fetching Mesa $MESA_VERSION lavapipe from bookworm-backports ($mirror)"
apt-get "${apt_opts[@]}" -qq update

wanted=()
for pkg in "${!PINNED[@]}"; do
	read -r version sha <<<"${PINNED[$pkg]}"
	if apt-cache "${apt_opts[@]}" show "$pkg=$version" >/dev/null 2>&1; then
		wanted+=("$pkg=$version")
	else
		current=$(apt-cache "${apt_opts[@]}" policy "$pkg" | awk '/Candidate:/ { print $2 }')
		echo "deps: WARNING: $pkg $version is no longer in bookworm-backports; taking the current $current (not checksum-pinned)" >&2
		wanted+=("$pkg=$current")
		PINNED[$pkg]="$current -"
	fi
done
(cd "$work/debs" && apt-get "${apt_opts[@]}" -qq download "${wanted[@]}")
for pkg in "${!PINNED[@]}"; do
	read -r version sha <<<"${PINNED[$pkg]}"
	deb=$(ls "$work/debs/${pkg}_"*.deb)
	if [ "$sha" != - ]; then
		echo "$sha  $deb" | sha256sum --check --quiet || { echo "deps: $deb does not match the pinned SHA-256" >&2; exit 1; }
	fi
done

rm -rf "$dest.new"
mkdir -p "$dest.new"
for deb in "$work/debs"/*.deb; do
	dpkg -x "$deb" "$dest.new/root"
done
libdir="$dest/root/usr/lib/x86_64-linux-gnu"
[ -f "$dest.new/root/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so" ] || { echo "deps: libvulkan_lvp.so missing from the packages" >&2; exit 1; }
# The shipped ICD file names a bare libvulkan_lvp.so; ours names the file.
api=$(sed -n 's/.*"api_version": *"\([^"]*\)".*/\1/p' "$dest.new/root/usr/share/vulkan/icd.d/lvp_icd.json")
cat >"$dest.new/lvp_icd.json" <<JSON
{"file_format_version": "1.0.1", "ICD": {"library_path": "$libdir/libvulkan_lvp.so", "api_version": "${api:-1.4.305}"}}
JSON
# Only lavapipe is kept: the hardware drivers of the same package would
# shadow the system's own.
find "$dest.new/root" -name '*.json' -path '*icd.d*' -delete
find "$dest.new/root/usr/lib" -name 'libvulkan_*' ! -name 'libvulkan_lvp.so' -delete
find "$dest.new/root/usr/lib" -name 'libVkLayer*' -delete
rm -rf "$dest.new/root/usr/share/vulkan" "$dest.new/root/usr/share/doc"
printf '%s\n' "${wanted[@]}" >"$dest.new/installed"
rm -rf "$dest"
mv "$dest.new" "$dest"
echo "deps: installed lavapipe into $dest"

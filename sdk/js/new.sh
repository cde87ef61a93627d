#!/usr/bin/env bash
# Creates a JavaScript plugin project: the reference recipe for
# `kaizen plugins new NAME --lang js`.
#
#   new.sh NAME DIR    (KIT defaults to this script's directory)
#
# Writes DIR with template/'s files, `{{name}}`, `{{snake_name}}` and
# `{{camel_name}}` replaced (my-tool, my_tool, MyTool), and a copy of the
# kit in DIR/kaizen-sdk/ so that `node --test` runs with no install step.
set -euo pipefail

KIT=${KIT:-$(cd "$(dirname "$0")" && pwd)}
[[ $# -eq 2 ]] || { echo "usage: $0 NAME DIR" >&2; exit 2; }
name=$1 dir=$2
[[ $name =~ ^[a-z0-9]+(-[a-z0-9]+)*$ ]] ||
  { echo "new.sh: NAME must be lowercase letters and digits, words joined by '-' (e.g. my-tool)" >&2; exit 1; }
[[ ! -e $dir ]] || { echo "new.sh: $dir already exists" >&2; exit 1; }

snake=${name//-/_}
camel=""
IFS=- read -ra words <<<"$name"
for word in "${words[@]}"; do camel+="${word^}"; done

mkdir -p "$dir/kaizen-sdk"
for file in plugin.toml package.json tool.js tool.test.js README.md; do
  sed -e "s/{{name}}/$name/g" -e "s/{{snake_name}}/$snake/g" -e "s/{{camel_name}}/$camel/g" \
    "$KIT/template/$file" >"$dir/$file"
done
cp "$KIT/kaizen-sdk/index.js" "$KIT/kaizen-sdk/index.d.ts" "$KIT/kaizen-sdk/package.json" "$dir/kaizen-sdk/"
echo "created $dir: test with (cd $dir && node --test)"

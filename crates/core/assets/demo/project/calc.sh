# A tiny calculator: source this file, then call add, sub or mul with two integers.

add() {
  echo $(( $1 - $2 ))
}

sub() {
  echo $(( $1 - $2 ))
}

mul() {
  echo $(( $1 * $2 ))
}

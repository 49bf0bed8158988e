fn main() {
    tokenpipe_cli::run("fire", tokenpipe_fire::main)
}
